"""kstrata.cli"""
