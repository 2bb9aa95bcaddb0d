"""The conformance suite: every feature under ``features/``, as pytest tests.

``memconform run`` passes this file to pytest; the kit's own tests import it.
"""

from pytest_bdd import scenarios

from memconform.resources import features_dir

scenarios(str(features_dir()))
