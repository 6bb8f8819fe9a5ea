"""Passes that rewrite relax IR. Each module registers its passes with ``@register_pass``."""
