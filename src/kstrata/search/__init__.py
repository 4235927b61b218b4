"""kstrata.search"""
