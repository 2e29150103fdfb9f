"""Evidence for a hint, gathered where the student's code ran: the number of dims of each `.T` operand in
the line that raised, read from that line's frame.

`x.T` reverses every dim, so it is a mistake only on a tensor of more than two dims; on a matrix it is the
transpose the student meant. Only the worker (or the notebook's own kernel) holds the frame, so it sends
these numbers as data with the error, and the trusted side gives the `.T` hint only when one of them is not
2 (core/hints.py). An operand is resolved only where it is a name or a chain of attributes (`keys`,
`v2.W_query.weight`), never by calling anything; any other operand gives no number, hence no hint.
"""
import ast
import sys

MAX_OPERANDS = 8


def attribute_chain(node):
    """['v2', 'W_query', 'weight'] for the expression v2.W_query.weight, None for anything else."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(names)]


def _resolve(names, frame):
    scopes = (frame.f_locals, frame.f_globals)
    value = next((scope[names[0]] for scope in scopes if names[0] in scope), None)
    for name in names[1:]:
        value = getattr(value, name, None)  # a module's parameter is found through nn.Module.__getattr__
    return value


def transposed_dims(line: str, frame) -> list:
    """The dims of each `.T` operand of `line` that names a tensor of `frame` (one number per such operand)."""
    torch = sys.modules.get("torch")  # not imported: no tensor exists, so there is nothing to measure
    if torch is None or frame is None or ".T" not in line:
        return []
    try:
        tree = ast.parse(line.strip().rstrip(":\\"), mode="exec")
    except SyntaxError:  # a line of a longer statement: no evidence
        return []
    dims = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "T" and (names := attribute_chain(node.value)):
            try:
                value = _resolve(names, frame)
            except Exception:  # a property of the student's that raises: no evidence from it
                continue
            if isinstance(value, torch.Tensor):
                dims.append(int(torch.Tensor.dim(value)))
    return dims[:MAX_OPERANDS]


def last_student_frame(tb, locate):
    """The frame of the last traceback entry that `locate` calls the student's (None where there is none)."""
    found = None
    while tb is not None:
        if locate(tb.tb_frame.f_code.co_filename) is not None:
            found = tb.tb_frame
        tb = tb.tb_next
    return found
