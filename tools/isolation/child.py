"""The bootstrap the sandboxed interpreter runs (passed with `python -c`, never imported by the app).

It reads the program from stdin, detaches stdin, and executes the program as `__main__`. Like a REPL,
the value of a final bare expression is printed. It imports only builtin modules (`_ast`, not `ast`,
which costs ~5 ms) so the sandbox adds little to the interpreter's own start-up time. Everything
here runs after the process is already confined: it is convenience, not a security boundary.
"""

import sys

_src = sys.stdin.read()
sys.stdin.close()
sys.stdin = open("/dev/null")  # noqa: SIM115 - input() sees end of file, never the parent's pipe
_ns = {"__name__": "__main__", "__builtins__": __builtins__}
try:
    import _ast

    _tree = compile(_src, "<code>", "exec", _ast.PyCF_ONLY_AST)
    assert isinstance(_tree, _ast.Module)  # PyCF_ONLY_AST in "exec" mode always yields a Module
    _last = None
    _final = _tree.body[-1] if _tree.body else None
    if isinstance(_final, _ast.Expr):
        _tree.body.pop()
        _last = _ast.Expression(_final.value)
    exec(compile(_tree, "<code>", "exec"), _ns)
    if _last is not None:
        _value = eval(compile(_last, "<code>", "eval"), _ns)
        if _value is not None:
            print(repr(_value))
except SystemExit:
    raise
except BaseException as _exc:  # report like the interpreter does, without this bootstrap's frame
    import linecache
    import traceback

    linecache.cache["<code>"] = (len(_src), None, _src.splitlines(True), "<code>")
    _tb = _exc.__traceback__.tb_next if _exc.__traceback__ is not None else None
    traceback.print_exception(type(_exc), _exc, _tb)
    sys.stderr.flush()
    sys.exit(1)
finally:
    sys.stdout.flush()
