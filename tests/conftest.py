"""Settings for the whole suite."""

from hypothesis import HealthCheck, settings

# Property tests check behaviour, not speed: on a shared, loaded machine one example can take
# longer than Hypothesis's default 200 ms deadline without anything being wrong. Timing belongs
# to bench/, so no test here fails on time alone.
settings.register_profile(
    "sitemapaudit", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("sitemapaudit")
