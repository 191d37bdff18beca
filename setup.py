"""Package list for setuptools, which pyproject.toml alone cannot express.

The sitemap XSDs live in the repository's top-level ``schemas/`` directory and are shipped
inside the distribution as the package ``sitemapaudit.schemas``
(``[tool.setuptools.package-dir]`` in pyproject.toml maps that package to ``schemas/``).
In pyproject.toml, setuptools accepts either automatic package discovery or an explicit
package list, not discovery plus one extra mapped package, so the list is computed here:
every package under ``sitemapaudit`` plus ``sitemapaudit.schemas``.

All other metadata and the package data stay in pyproject.toml. This file also matters for
scrapyd: ``scrapyd-deploy`` builds the egg with ``python setup.py bdist_egg`` and only writes
its own minimal setup.py when a project has none, so with this file the deployed egg carries
the schemas too.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["sitemapaudit", "sitemapaudit.*"]), "sitemapaudit.schemas"],
)
