"""kstrata.verify"""
