"""kstrata.tasks"""
