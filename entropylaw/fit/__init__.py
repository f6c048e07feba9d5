"""entropylaw.fit"""
