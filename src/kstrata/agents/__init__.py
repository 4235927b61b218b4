"""kstrata.agents"""
