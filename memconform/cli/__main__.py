"""``python -m memconform.cli``: the ``memconform`` command."""

from memconform.cli import main

raise SystemExit(main())
