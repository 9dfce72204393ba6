"""The study app's HTTP routes, one module per area; ``create_app`` joins their ``ROUTES``."""
