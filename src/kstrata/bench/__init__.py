"""kstrata.bench"""
