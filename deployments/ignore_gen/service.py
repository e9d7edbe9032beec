"""The generator behind the routes: the engine plus the request checks that need configuration."""

from __future__ import annotations

from collections.abc import Sequence

from deployments.ignore_gen.config import IgnoreGenConfig
from deployments.ignore_gen.engine import Diff, Engine, Generated, Options, UnknownFeatureError
from deployments.ignore_gen.errors import ApiError
from deployments.ignore_gen.models import DiffRequest, GenerateOptions
from deployments.ignore_gen.rules_table import load_rules_table
from deployments.ignore_gen.templates import load_templates


class Service:
    """Engine plus the request checks that need configuration."""

    def __init__(self, config: IgnoreGenConfig) -> None:
        self.config = config
        self.engine = Engine(load_templates(config.templates_dir), load_rules_table(config.rules_table))

    def check_limits(self, body: GenerateOptions) -> None:
        lim = self.config.limits
        if body.tree is not None:
            if len(body.tree) > lim.max_tree_paths:
                raise ApiError(413, f"tree has {len(body.tree)} paths; the limit is {lim.max_tree_paths}")
            longest = max(map(len, body.tree), default=0)
            if longest > lim.max_path_length:
                raise ApiError(413, f"a tree path has {longest} characters; the limit is {lim.max_path_length}")
        if body.features is not None and len(body.features) > lim.max_features:
            raise ApiError(413, f"{len(body.features)} features; the limit is {lim.max_features}")
        if len(body.extras) > lim.max_extras:
            raise ApiError(413, f"{len(body.extras)} extras; the limit is {lim.max_extras}")
        for extra in body.extras:
            if len(extra) > lim.max_pattern_length:
                raise ApiError(
                    422, f"an extra pattern has {len(extra)} characters; the limit is {lim.max_pattern_length}"
                )

    def options(self, body: GenerateOptions) -> Options:
        if body.tree is None and body.features is None:
            raise ApiError(400, "either 'tree' (file paths) or 'features' (feature names) is required")
        self.check_limits(body)
        _check_text("tree", body.tree or ())
        _check_text("extras", body.extras)
        return Options(body.include_comments, body.include_provenance, tuple(body.extras))

    def generate(self, body: GenerateOptions) -> Generated:
        options = self.options(body)
        try:
            return self.engine.generate(body.tree, body.features, options)
        except UnknownFeatureError as exc:
            raise ApiError(404, str(exc)) from None

    def diff(self, body: DiffRequest) -> Diff:
        options = self.options(body)
        _check_text("existing", (body.existing,))
        size = len(body.existing.encode("utf-8"))
        if size > self.config.limits.max_existing_bytes:
            raise ApiError(413, f"existing is {size} bytes; the limit is {self.config.limits.max_existing_bytes}")
        try:
            return self.engine.diff(body.existing, body.tree, body.features, options)
        except UnknownFeatureError as exc:
            raise ApiError(404, str(exc)) from None


def _check_text(field: str, values: Sequence[str]) -> None:
    """422 when a value holds a lone surrogate: JSON can escape one (`\\ud800`), no UTF-8 file
    can hold it, and the output (a kept negation names a tree path) must be UTF-8."""
    text = "\n".join(values)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(
                422, f"body.{field}: a lone surrogate is not text (paths and patterns must be UTF-8)"
            ) from None
