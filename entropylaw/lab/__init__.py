"""entropylaw.lab"""
