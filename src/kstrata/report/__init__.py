"""kstrata.report"""
