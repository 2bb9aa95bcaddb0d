"""``python -m memconform``: the ``memconform`` command."""

from memconform.cli import main

raise SystemExit(main())
