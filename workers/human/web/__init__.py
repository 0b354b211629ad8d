"""The review page (``windags-eval review-ui``): Starlette, Jinja2, no script."""

from workers.human.web.app import create_app

__all__ = ["create_app"]
