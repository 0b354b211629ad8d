"""TypeScript newer than tree-sitter's grammar: read as the compiler reads it, slips still found."""

from __future__ import annotations

import pytest

from schemas.code import BlockStatus
from schemas.request import NodeOutput, OutputKind
from workers.evaluate import check_floor
from workers.evaluate.code.blocks import read_blocks

# Shaped on what npm packages publish: zod's schemas, type-fest's and rxjs's declarations.
VALID = {
    "variance": (
        "export interface ZodObject<\n"
        "  /** @ts-ignore Cast variance */\n"
        "  out Shape extends ZodShape = ZodLooseShape,\n"
        "  in out Config extends ObjectConfig = Strip,\n"
        "> extends ZodType<ObjectInternals<Shape, Config>> {}\n"
        "type Check<in T = never> = (input: T) => void;\n"
    ),
    "type_star": "export type * from './observable-like.d.ts';\nexport type * as t from './t';\n",
    "default_signature": (
        'import type * as errors from "../core/errors.js";\n'
        "export default function (): {\n    localeError: errors.ErrorMap;\n};\n"
    ),
    "import_member": (
        "export declare function scheduleObservable<T>(input: InteropObservable<T>, "
        'scheduler: SchedulerLike): import("../Observable").Observable<T>;\n'
    ),
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_syntax_newer_than_the_grammar_passes_the_floor(name: str) -> None:
    output = NodeOutput(kind=OutputKind.TYPESCRIPT, content=VALID[name])
    assert check_floor(output, None).passed


def test_a_slip_after_newer_syntax_is_still_found_where_it_is() -> None:
    broken = VALID["variance"] + "export const parse = (x: unknown) => {\n  return [x;\n};\n"
    floor = check_floor(NodeOutput(kind=OutputKind.TYPESCRIPT, content=broken), None)
    (violation,) = floor.violations
    assert violation.position is not None and violation.position.line == 8


def test_variance_is_blanked_only_in_type_parameters() -> None:
    # `in` as an operator and `out` as a name are left as they are, and still read.
    text = "for (const key in record) {\n  const out = key in other, y = a < b;\n}\n"
    assert check_floor(NodeOutput(kind=OutputKind.TYPESCRIPT, content=text), None).passed


# type-fest's declarations: a doc comment's example shows results as `//=> never`.
DOC_EXAMPLE = (
    "/**\nFilter out keys from an object.\n\n@example\n```\n"
    "type Filtered = Filter<'foo', 'foo'>;\n//=> never\n```\n*/\n"
    "type Filter<KeyType, ExcludeType> = IsEqual<KeyType, ExcludeType> extends true\n"
    "\t? never\n\t: (KeyType extends ExcludeType ? never : KeyType);\n\nexport {};\n"
)


def _fenced(body: str) -> BlockStatus:
    (reading,) = read_blocks(f"````ts\n{body}````\n")
    return reading.status


def test_a_result_shown_inside_a_doc_comment_elides_no_code() -> None:
    assert _fenced(DOC_EXAMPLE) is BlockStatus.PARSED
    broken = DOC_EXAMPLE.replace("export {};", "export {;")
    assert _fenced(broken) is BlockStatus.SYNTAX_ERROR


def test_a_slip_beside_syntax_newer_than_the_grammar_is_broken_code_not_another_language() -> None:
    body = "export type * from './observable-like.d.ts';\n\nexport {};\n"
    assert _fenced(body) is BlockStatus.PARSED
    broken = body.replace("d.ts';", "d.ts;")
    assert _fenced(broken) is BlockStatus.SYNTAX_ERROR


def test_a_typescript_module_with_jsx_passes_the_floor_as_a_tsx_file_does() -> None:
    component = (
        'import * as React from "react";\n\n'
        "export const Greeting = ({ name }: { name: string }): React.ReactElement => {\n"
        '  return <div className="greeting">Hello, {name}</div>;\n};\n'
    )
    assert check_floor(NodeOutput(kind=OutputKind.TYPESCRIPT, content=component), None).passed
    broken = component.replace("</div>;", "</div;")
    assert not check_floor(NodeOutput(kind=OutputKind.TYPESCRIPT, content=broken), None).passed
