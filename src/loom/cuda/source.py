"""The minimal preprocessor in front of the C parser.

CUDA is not C, so a few constructs are rewritten on the token stream of pycparser's own
lexer before parsing (no textual pattern matching): `__global__` is dropped, a launch
`k<<<g, b>>>(args)` becomes the call `__loom_launch(k, g, b, args)`, and every `#define`d
name (or one given with `--define NAME=VALUE`, which wins) is replaced by its tokens in
parentheses. The CUDA built-ins are declared in a prelude followed by a line marker, so
the parser's coordinates still name the user's file and line.
"""

from __future__ import annotations

from pycparser.c_lexer import CLexer, Token

from loom.errors import CudaSubsetError

PRELUDE = (
    "typedef struct { int x; int y; int z; } __loom_dim3; "
    "__loom_dim3 blockIdx, threadIdx, blockDim, gridDim; "
    "typedef float __nv_bfloat16; "
    "__loom_dim3 dim3(int y, int x); "
    "void __loom_launch();\n"
)
UNSUPPORTED = {
    "__shared__": "shared memory",
    "__syncthreads": "barrier synchronisation (__syncthreads)",
    "__device__": "device functions",
    "atomicAdd": "atomic operations",
}


def _lex(text: str, path: str) -> list[Token]:
    def fail(msg: str, line: int, col: int) -> None:
        raise CudaSubsetError(f"{path}:{line}: the C lexer cannot read this: {msg}.")

    lexer = CLexer(fail)
    lexer.input(text, path)
    out: list[Token] = []
    while (tok := lexer.token()) is not None:
        out.append(tok)
    return out


def strip_comments(text: str) -> str:
    """Replace comments by spaces, keeping newlines (and so line numbers)."""
    out: list[str] = []
    i, n = 0, len(text)
    quote = ""
    while i < n:
        ch = text[i]
        if quote:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            out.append(ch)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(c if c == "\n" else " " for c in text[i:end]))
            i = end
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def split_directives(text: str, path: str) -> tuple[str, dict[str, str]]:
    """Blank out preprocessor lines (keeping line numbers); collect `#define`s."""
    text = strip_comments(text)
    defines: dict[str, str] = {}
    lines = []
    for n, line in enumerate(text.splitlines(), start=1):
        head = line.strip()
        if head.startswith("#"):
            words = head[1:].split(None, 2)
            if words and words[0] == "define":
                if len(words) < 3 or "(" in words[1]:
                    raise CudaSubsetError(
                        f"{path}:{n}: only object-like `#define NAME value` is supported; "
                        "write the value out or pass --define NAME=VALUE."
                    )
                defines[words[1]] = words[2]
            elif not words or words[0] not in ("include", "pragma"):
                raise CudaSubsetError(
                    f"{path}:{n}: preprocessor directive `{head}` is not supported; only "
                    "#define, #include and #pragma lines are accepted."
                )
            lines.append("")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n", defines


def preprocess(text: str, path: str, overrides: dict[str, str]) -> tuple[str, dict[str, str]]:
    """C text ready for pycparser, and the defines in force."""
    body, defines = split_directives(text, path)
    defines.update(overrides)
    expansions = {name: _lex(value, path) for name, value in defines.items()}
    tokens: list[Token] = []
    for tok in _lex(body, path):
        if tok.type == "ID" and tok.value in expansions:
            tokens.append(Token("LPAREN", "(", tok.lineno, tok.column, tok.filename))
            tokens.extend(
                Token(e.type, e.value, tok.lineno, tok.column, tok.filename)
                for e in expansions[tok.value]
            )
            tokens.append(Token("RPAREN", ")", tok.lineno, tok.column, tok.filename))
        else:
            tokens.append(tok)
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.value in UNSUPPORTED:
            raise CudaSubsetError(
                f"{path}:{tok.lineno}: {UNSUPPORTED[tok.value]} is outside the affine CUDA "
                "subset Loom compiles; rewrite the kernel without it (each thread reads "
                "global arrays and writes one element)."
            )
        if tok.value == "__global__":
            i += 1
            continue
        if (
            tok.type == "ID"
            and i + 2 < len(tokens)
            and tokens[i + 1].value == "<<"
            and tokens[i + 2].value == "<"
        ):
            i = _launch(tokens, i, out, path)
            continue
        out.append((tok.lineno, _text(tok)))
        i += 1
    return PRELUDE + f'# 1 "{path}"\n' + _layout(out), defines


def _text(tok: Token) -> str:
    value = str(tok.value)
    if tok.type == "STRING_LITERAL" and not value.startswith('"'):
        return f'"{value}"'
    return value


def _launch(tokens: list[Token], i: int, out: list[tuple[int, str]], path: str) -> int:
    """Rewrite `k<<<cfg>>>(args)` starting at tokens[i]; return the next index."""
    line = tokens[i].lineno
    out.extend(((line, "__loom_launch"), (line, "("), (line, tokens[i].value), (line, ",")))
    j = i + 3
    depth = 0
    while j < len(tokens):
        v = tokens[j].value
        if depth == 0 and v == ">>" and j + 1 < len(tokens) and tokens[j + 1].value == ">":
            break
        depth += v == "("
        depth -= v == ")"
        out.append((tokens[j].lineno, _text(tokens[j])))
        j += 1
    else:
        raise CudaSubsetError(
            f"{path}:{line}: unterminated kernel launch `<<<`; close it with `>>>`."
        )
    j += 2
    if j >= len(tokens) or tokens[j].value != "(":
        raise CudaSubsetError(f"{path}:{line}: a kernel launch needs its argument list `(...)`.")
    if j + 1 < len(tokens) and tokens[j + 1].value == ")":
        out.append((line, ")"))
        return j + 2
    out.append((line, ","))
    return j + 1


def _layout(tokens: list[tuple[int, str]]) -> str:
    """Tokens back to text, each on its original line."""
    lines: list[str] = []
    for line, text in tokens:
        while len(lines) < line:
            lines.append("")
        lines[line - 1] += (" " if lines[line - 1] else "") + text
    return "\n".join(lines) + "\n"
