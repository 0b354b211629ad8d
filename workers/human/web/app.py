"""``windags-eval review-ui``: the review page, server-rendered, no script at all.

Starlette with Jinja2 templates (autoescape on) and a strict Content-Security-Policy
that allows no script and no inline style: hostile node output is shown as text, and
would not run even if a template slipped. Redis calls run in Starlette's thread pool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

import redis
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schemas.human import HumanReason
from workers.connections import redis_client
from workers.human.gate import HumanGate, build_gate
from workers.human.web.auth import Auth, valid_name
from workers.human.web.dag_page import dag_view
from workers.human.web.render import highlight_css, position_text
from workers.human.web.verdict_form import item_view, submit_verdict
from workers.results.dags import DagRegistry
from workers.results.progress import ProgressReader
from workers.settings import Settings

#: No script from anywhere, styles only from this origin, forms only back to it.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    """Adds the CSP and its companions to every response (pure ASGI middleware)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass through, adding the headers to each response's start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


class Page:
    """What every view needs: the gate, the sign-in rules and the templates."""

    def __init__(self, gate: HumanGate, auth: Auth, client: redis.Redis) -> None:
        self.gate = gate
        self.auth = auth
        self.redis = client
        self.templates = Environment(
            loader=PackageLoader("workers.human.web", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        self.templates.filters["keypath"] = lambda key: quote(str(key), safe="")
        self.templates.filters["position"] = position_text

    def html(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        """Render ``name`` with a CSRF token for the signed-in reviewer, if any."""
        seed, new = self.auth.csrf_seed(request)
        reviewer = context.get("reviewer") or ""
        context["csrf"] = self.auth.csrf_token(seed, reviewer)
        body = self.templates.get_template(name).render(**context)
        response = HTMLResponse(body, status_code=status)
        if new:
            self.auth.set_csrf(response, seed)
        return response

    def message(self, request: Request, status: int, text: str, reviewer: str = "") -> HTMLResponse:
        """A page that only says ``text``."""
        return self.html(request, "message.html", status, message=text, reviewer=reviewer)


View = Callable[[Request, Page, str], Awaitable[Response]]


def signed_in(view: View) -> Callable[[Request], Awaitable[Response]]:
    """Run ``view`` for a signed-in reviewer; send anyone else to sign in."""

    async def endpoint(request: Request) -> Response:
        page: Page = request.app.state.page
        reviewer = page.auth.reviewer(request)
        if reviewer is None:
            if page.auth.token is None:
                return page.message(request, 401, "Sign-in is handled by your proxy.")
            if request.method != "GET":
                return page.message(request, 401, "Sign in first.")
            return RedirectResponse("/login", status_code=303)
        return await view(request, page, reviewer)

    return endpoint


async def queue_view(request: Request, page: Page, reviewer: str) -> Response:
    """The queue, oldest first, filtered by DAG, skill and reason."""
    query = request.query_params
    reason_text = query.get("reason") or None
    reason = HumanReason(reason_text) if reason_text in set(HumanReason) else None
    dag, skill = query.get("dag") or None, query.get("skill") or None
    lines = await run_in_threadpool(
        page.gate.queue.pending, dag_id=dag, skill_id=skill, reason=reason
    )
    return page.html(
        request,
        "queue.html",
        reviewer=reviewer,
        lines=lines,
        reasons=list(HumanReason),
        filters={"dag": dag or "", "skill": skill or "", "reason": reason.value if reason else ""},
    )


async def login(request: Request) -> Response:
    """Sign in with the shared token and a name."""
    page: Page = request.app.state.page
    if page.auth.token is None:
        return page.message(request, 404, "Sign-in is handled by your proxy.")
    if request.method == "GET":
        return page.html(request, "login.html", error=None)
    form = await request.form(max_files=0, max_fields=10)
    if not page.auth.csrf_ok(request, str(form.get("csrf", "")), ""):
        return page.message(request, 403, "The form expired or came from elsewhere; reload it.")
    name = valid_name(str(form.get("name", "")))
    if name is None or not page.auth.token_matches(str(form.get("token", ""))):
        return page.html(request, "login.html", 401, error="Wrong token, or no name given.")
    response = RedirectResponse("/", status_code=303)
    page.auth.start_session(response, name)
    return response


async def logout(request: Request) -> Response:
    """Sign out (a POST with the CSRF token)."""
    page: Page = request.app.state.page
    form = await request.form(max_files=0, max_fields=10)
    reviewer = page.auth.reviewer(request) or ""
    if not page.auth.csrf_ok(request, str(form.get("csrf", "")), reviewer):
        return page.message(request, 403, "The form expired or came from elsewhere; reload it.")
    response = RedirectResponse("/login", status_code=303)
    page.auth.end_session(response)
    return response


async def stylesheet(_: Request) -> Response:
    """The highlighted code's classes, from our own origin (the CSP allows no inline style)."""
    return PlainTextResponse(highlight_css(), media_type="text/css")


#: What a page says while its Redis does not answer (the queue and verdicts live there).
REDIS_DOWN = "The review queue is unavailable: its Redis does not answer. Try again shortly."


async def livez(_: Request) -> Response:
    """Liveness: the process serves; no sign-in, no Redis (a restart cannot fix Redis)."""
    return PlainTextResponse("ok")


async def healthz(request: Request) -> Response:
    """Readiness: 200 when the page's Redis answers, else 503 saying so; no sign-in."""
    page: Page = request.app.state.page
    try:
        await run_in_threadpool(page.redis.ping)
    except redis.RedisError:
        return PlainTextResponse("redis unavailable", status_code=503)
    return PlainTextResponse("ok")


async def redis_down(request: Request, _: Exception) -> Response:
    """Any page whose Redis does not answer: one sentence and 503, never a bare 500."""
    page: Page = request.app.state.page
    return page.message(request, 503, REDIS_DOWN)


def create_app(settings: Settings, *, client: redis.Redis | None = None) -> Starlette:
    """The review page for the deployment ``settings`` describe.

    Raises:
        ConfigurationError: neither a reviewer token nor an auth header is configured.
    """
    auth = Auth.from_settings(settings)
    client = client or redis_client(settings, max_connections=16)
    page = Page(build_gate(client, settings), auth, client)
    static = StaticFiles(packages=[("workers.human.web", "static")])
    app = Starlette(
        routes=[
            Route("/", signed_in(queue_view)),
            Route("/login", login, methods=["GET", "POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/review/{key:path}/verdict", signed_in(submit_verdict), methods=["POST"]),
            Route("/review/{key:path}", signed_in(item_view)),
            Route("/dag/{dag_id:path}", signed_in(dag_view)),
            Route("/static/highlight.css", stylesheet),
            Mount("/static", app=static, name="static"),
            Route("/healthz", healthz),
            Route("/livez", livez),
        ],
        exception_handlers={redis.RedisError: redis_down},
    )
    app.state.page = page
    registry = DagRegistry(client, settings.keys, ttl_s=settings.stream_retention_s)
    app.state.progress = ProgressReader(client, settings.keys, registry)
    app.add_middleware(SecurityHeaders)
    return app
