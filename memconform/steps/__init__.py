"""The pytest plugin and the step definitions of every profile.

The plugin lives in this package, so importing the package is the first of the
kit's code a pytest process runs: when ``memconform run --coverage`` asked for
measurement it starts here, before the kit imports what it may measure
(:mod:`memconform.measurement`).
"""

from memconform.measurement import start_from_environment as _start_measuring

_start_measuring()
