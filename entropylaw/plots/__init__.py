"""entropylaw.plots"""
