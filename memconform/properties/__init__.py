"""Property-based conformance: generated operations, the store under test
compared with the reference, counterexamples shrunk and exported as features."""

from memconform.properties.export import export_counterexample, feature_text
from memconform.properties.store_model import Divergence, StoreModel, model_for

__all__ = ["Divergence", "StoreModel", "export_counterexample", "feature_text", "model_for"]
