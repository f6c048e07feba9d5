"""entropylaw.probe"""
