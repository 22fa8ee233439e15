import os
import sys

# tests/reference.py holds the independent reference solvers.
sys.path.insert(0, os.path.dirname(__file__))
