"""harnesskit: a Jupyter-native research toolkit for LLM agent harnesses."""

__version__ = "0.1.0"
