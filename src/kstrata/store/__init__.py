"""kstrata.store"""
