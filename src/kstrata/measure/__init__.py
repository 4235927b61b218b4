"""kstrata.measure"""
