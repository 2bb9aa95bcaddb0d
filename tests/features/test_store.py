from pytest_bdd import scenarios

from memconform.resources import features_dir

scenarios(str(features_dir() / "store"))
