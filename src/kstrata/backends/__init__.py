"""kstrata.backends"""
