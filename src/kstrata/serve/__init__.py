"""kstrata.serve"""
