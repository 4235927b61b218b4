"""kstrata.llm"""
