"""Section 12's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import Mistake
from catalogues.student_trial_part2 import trial_mistakes, trial_styles

SECTION = "12_rope"

# the checks' titles, as the catalogue names them
DOC_ANGLES = "documented cos and sin tables"
ANGLES_SHAPE = "two float32 tables"
ODD = "odd head_dim"
HALVES = "two halves of each table are alike"
THETA = "uses theta_base"
REF_ANGLES = "rope_angles matches the reference"
DOC_ROTATED = "documented rotated queries"
LEADING = "works on (T, head_dim)"
NORMS = "keeps the length"
RELATIVE = "scores q @ k.T after apply_rope"
OFFSET = "offset=k rotates"
UNCHANGED = "leaves x unchanged"
DEVICE = "apply_rope answers on its input's device"
REF_ROTATION = "apply_rope matches the reference"
ATT_DOC = "documented context vectors"
ATT_CAUSAL = "rope_attention is causal"
ATT_SHIFT = "output is unchanged when every position shifts by"
ATT_OFFSET = "passes its offset on"
ATT_DEVICE = "rope_attention answers on its input's device"
ATT_REF = "rope_attention matches the reference"
ATT_REF_SHIFT = "every position shifts, on new sizes"
ANGLE_VALUES = [DOC_ANGLES, THETA, REF_ANGLES]  # a wrong formula of rope_angles: every comparison of its values
ROTATION_VALUES = [DOC_ROTATED, LEADING, REF_ROTATION]  # a wrong formula of apply_rope that is still a rotation

HARD_CODED = {
    "rope_angles": """
        def rope_angles(head_dim, context_length, theta_base=10_000):
            cos = torch.tensor([[1.0000, 1.0000, 1.0000, 1.0000], [0.5403, 0.9999, 0.5403, 0.9999],
                                [-0.4161, 0.9998, -0.4161, 0.9998], [-0.9900, 0.9996, -0.9900, 0.9996],
                                [-0.6536, 0.9992, -0.6536, 0.9992], [0.2837, 0.9988, 0.2837, 0.9988]])
            sin = torch.tensor([[0.0000, 0.0000, 0.0000, 0.0000], [0.8415, 0.0100, 0.8415, 0.0100],
                                [0.9093, 0.0200, 0.9093, 0.0200], [0.1411, 0.0300, 0.1411, 0.0300],
                                [-0.7568, 0.0400, -0.7568, 0.0400], [-0.9589, 0.0500, -0.9589, 0.0500]])
            return cos, sin
        """,
    "apply_rope": """
        def apply_rope(x, cos, sin, offset=0):
            return torch.tensor([[0.3022, 0.9986, 0.4093, 0.9230], [-0.2031, 1.5081, 0.5448, 0.9365],
                                 [-0.5649, 1.4772, 0.1258, 0.9491], [-0.2008, 0.8424, -0.2124, 0.4631],
                                 [0.0232, 0.6615, -0.3701, 0.6515], [0.3328, 1.0925, -0.0843, 0.5496]])
        """,
    "rope_attention": """
        def rope_attention(queries, keys, values, cos, sin, offset=0):
            return torch.tensor([[0.8918, 0.9171, 1.0733, 0.8657], [1.2376, 0.8801, 1.4021, 1.2247],
                                 [1.3093, 0.8704, 1.4677, 1.3086], [1.1689, 0.7687, 1.3119, 1.1535],
                                 [1.0449, 0.7358, 1.1691, 1.0933], [1.0730, 0.6947, 1.2029, 1.0545]])
        """,
}


def angles_with(inv_freq: str, positions: str = "torch.arange(context_length, dtype=torch.float32)",
                duplicate: str = "torch.cat((angles, angles), dim=-1)", check_odd: bool = True,
                returned: str = "torch.cos(angles), torch.sin(angles)") -> dict:
    """A rope_angles in the reference's shape, with one line changed."""
    odd = """
                if head_dim % 2:
                    raise ValueError(f"head_dim must be even, got {head_dim}")""" if check_odd else ""
    return {"rope_angles": f"""
            def rope_angles(head_dim, context_length, theta_base=10_000):{odd}
                inv_freq = {inv_freq}
                positions = {positions}
                angles = positions[:, None] * inv_freq[None, :]
                angles = {duplicate}
                return {returned}
            """}


RIGHT_FREQ = "theta_base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)"


def rope_with(turned: str = "torch.cat((-x2, x1), dim=-1)", rows: str = "cos[offset:offset + T], sin[offset:offset + T]",
              halves: str = "x[..., :half], x[..., half:]") -> dict:
    """An apply_rope in the reference's shape, with one line changed."""
    return {"apply_rope": f"""
            def apply_rope(x, cos, sin, offset=0):
                T, half = x.shape[-2], x.shape[-1] // 2
                cos, sin = {rows}
                x1, x2 = {halves}
                turned = {turned}
                return x * cos + turned * sin
            """}


def attention_with(rotated: str = "apply_rope(queries, cos, sin, offset), apply_rope(keys, cos, sin, offset)",
                   context: str = "weights @ values", scale: str = " / queries.shape[-1] ** 0.5",
                   future: str = "torch.ones(T, T, dtype=torch.bool, device=queries.device).triu(1)",
                   masked: str = "scores.masked_fill(future, float('-inf'))") -> dict:
    """A rope_attention in the reference's shape, with one line changed."""
    return {"rope_attention": f"""
            def rope_attention(queries, keys, values, cos, sin, offset=0):
                T = queries.shape[-2]
                q, k = {rotated}
                scores = q @ k.transpose(-2, -1){scale}
                future = {future}
                weights = torch.softmax({masked}, dim=-1)
                return {context}
            """}


MISTAKES = [
    # rope_angles
    Mistake("rope_angles: documented tables hard-coded", {"rope_angles": HARD_CODED["rope_angles"]},
            [DOC_ANGLES, ANGLES_SHAPE, ODD, THETA, HALVES, REF_ANGLES], says="is the answer hard-coded?",
            # tables written out ignore every argument: the base too, which its own check names
            hard_coded=True, also=("an odd head_dim not refused", "theta_base ignored")),
    Mistake("exponent i/d with i the pair number",
            angles_with("theta_base ** (-torch.arange(head_dim // 2, dtype=torch.float32) / head_dim)"),
            ANGLE_VALUES, says="pair number"),
    Mistake("exponent not divided by head_dim",
            angles_with("theta_base ** (-torch.arange(0, head_dim, 2, dtype=torch.float32))"),
            ANGLE_VALUES, says="not divided by head_dim"),
    Mistake("torch.arange(head_dim), every column its own frequency", angles_with(
        "theta_base ** (-torch.arange(head_dim, dtype=torch.float32) / head_dim)", duplicate="angles"),
            [DOC_ANGLES, THETA, HALVES, REF_ANGLES], says="torch.arange(head_dim) instead of"),
    Mistake("angles repeat_interleaved (the interleaved layout)",
            angles_with(RIGHT_FREQ, duplicate="angles.repeat_interleave(2, dim=-1)"),
            [DOC_ANGLES, THETA, HALVES, REF_ANGLES], says="repeat_interleaved"),
    Mistake("positions counted from 1",
            angles_with(RIGHT_FREQ, positions="torch.arange(1, context_length + 1, dtype=torch.float32)"),
            ANGLE_VALUES, says="positions counted from 1"),
    Mistake("(sin, cos) returned", angles_with(RIGHT_FREQ, returned="torch.sin(angles), torch.cos(angles)"),
            ANGLE_VALUES, says="(sin, cos)"),
    Mistake("theta_base ignored",
            angles_with("10_000 ** (-torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)"),
            [THETA, REF_ANGLES], says="theta_base ignored"),
    Mistake("odd head_dim not refused", angles_with(RIGHT_FREQ, check_odd=False), [ODD], says="should raise ValueError"),
    Mistake("float64 tables", angles_with(
        "theta_base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)",
        positions="torch.arange(context_length, dtype=torch.float64)"), [ANGLES_SHAPE], says="float32"),
    # apply_rope
    Mistake("apply_rope: documented output hard-coded", {"apply_rope": HARD_CODED["apply_rope"]},
            [DOC_ROTATED, LEADING, NORMS, RELATIVE, OFFSET, DEVICE, REF_ROTATION],
            says="is the answer hard-coded?", hard_coded=True, also=("offset ignored",)),
    Mistake("the interleaved convention of the original paper", {"apply_rope": """
            def apply_rope(x, cos, sin, offset=0):
                T, half = x.shape[-2], x.shape[-1] // 2
                c, s = cos[offset:offset + T, :half], sin[offset:offset + T, :half]
                even, odd = x[..., 0::2], x[..., 1::2]
                return torch.stack((even * c - odd * s, odd * c + even * s), dim=-1).flatten(-2)
            """}, ROTATION_VALUES, says="interleaved convention"),
    Mistake("rotate_half with the minus on the wrong half", rope_with("torch.cat((x2, -x1), dim=-1)"),
            ROTATION_VALUES, says="wrong half"),
    Mistake("rotate_half without its minus", rope_with("torch.cat((x2, x1), dim=-1)"),
            [*ROTATION_VALUES, NORMS, RELATIVE], says="without its minus"),
    Mistake("offset ignored", rope_with(rows="cos[:T], sin[:T]"), [OFFSET, REF_ROTATION], says="offset ignored"),
    Mistake("tables not cut to the tokens' rows", rope_with(rows="cos, sin"), [LEADING, OFFSET, REF_ROTATION],
            says="not cut"),
    Mistake("x read as (B, H, T, d) only", {"apply_rope": """
            def apply_rope(x, cos, sin, offset=0):
                b, h, T, d = x.shape
                x1, x2 = x[:, :, :, : d // 2], x[:, :, :, d // 2:]
                turned = torch.cat((-x2, x1), dim=-1)
                cos, sin = cos[offset:offset + T], sin[offset:offset + T]
                return x * cos + turned * sin
            """}, [DOC_ROTATED, LEADING, REF_ROTATION], says="(B, H, T, head_dim) only"),
    Mistake("x rotated in place", {"apply_rope": """
            def apply_rope(x, cos, sin, offset=0):
                T, half = x.shape[-2], x.shape[-1] // 2
                c, s = cos[offset:offset + T, :half], sin[offset:offset + T, :half]
                x1, x2 = x[..., :half].clone(), x[..., half:].clone()
                x[..., :half] = x1 * c - x2 * s
                x[..., half:] = x2 * c + x1 * s
                return x
            """}, [UNCHANGED], says="modified its argument"),
    # rope_attention
    Mistake("rope_attention: documented output hard-coded", {"rope_attention": HARD_CODED["rope_attention"]},
            [ATT_DOC, ATT_CAUSAL, ATT_DEVICE, ATT_REF], says="is the answer hard-coded?", hard_coded=True),
    Mistake("RoPE applied to the values", attention_with(context="weights @ apply_rope(values, cos, sin, offset)"),
            [ATT_DOC, ATT_SHIFT, ATT_REF, ATT_REF_SHIFT], says="RoPE applied to the values"),
    Mistake("RoPE applied to the queries only", attention_with(rotated="apply_rope(queries, cos, sin, offset), keys"),
            [ATT_DOC, ATT_SHIFT, ATT_REF, ATT_REF_SHIFT], says="queries only"),
    Mistake("offset not passed on to apply_rope",
            attention_with(rotated="apply_rope(queries, cos, sin), apply_rope(keys, cos, sin)"),
            [ATT_OFFSET, ATT_REF], says="offset not passed on"),
    Mistake("the causal mask forgotten", attention_with(masked="scores"), [ATT_DOC, ATT_CAUSAL, ATT_REF],
            says="causal mask forgotten"),
    Mistake("the scores not scaled", attention_with(scale=""), [ATT_DOC, ATT_REF], says="square root of head_dim"),
    Mistake("the mask made on the CPU", attention_with(future="torch.ones(T, T, dtype=torch.bool).triu(1)"),
            [ATT_DEVICE], says="mixes devices"),
]

STYLES = [
    # torch.outer and exp/log for the frequencies; the halves by chunk
    {"rope_angles": """
        def rope_angles(head_dim, context_length, theta_base=10_000):
            import math
            if head_dim % 2 == 1:
                raise ValueError(f"odd head_dim {head_dim}")
            inv_freq = torch.exp(torch.arange(0, head_dim, 2).float() * (-math.log(theta_base) / head_dim))
            angles = torch.outer(torch.arange(context_length).float(), inv_freq)
            return torch.cat([angles.cos(), angles.cos()], -1), torch.cat([angles.sin(), angles.sin()], -1)
        """,
     "apply_rope": """
        def apply_rope(x, cos, sin, offset=0):
            T = x.size(-2)
            x1, x2 = x.chunk(2, dim=-1)
            return x * cos[offset:offset + T] + torch.cat((-x2, x1), dim=-1) * sin[offset:offset + T]
        """,
     "rope_attention": """
        def rope_attention(queries, keys, values, cos, sin, offset=0):
            import torch.nn.functional as F
            q = apply_rope(queries, cos, sin, offset=offset)
            k = apply_rope(keys, cos, sin, offset=offset)
            return F.scaled_dot_product_attention(q, k, values, is_causal=True)
        """},
    # the book's way: 1 / theta ** (...)[: head_dim // 2], angles.repeat; narrow for the rows
    {"rope_angles": """
        def rope_angles(head_dim, context_length, theta_base=10_000):
            if head_dim % 2 != 0:
                raise ValueError("Embedding dimension must be even, got head_dim=" + str(head_dim))
            inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
            positions = torch.arange(context_length).float()
            angles = (positions.unsqueeze(1) * inv_freq.unsqueeze(0)).repeat(1, 2)
            return torch.cos(angles), torch.sin(angles)
        """,
     "apply_rope": """
        def apply_rope(x, cos, sin, offset=0):
            T, d = x.shape[-2:]
            cos, sin = cos.narrow(0, offset, T), sin.narrow(0, offset, T)
            x1, x2 = x[..., : d // 2], x[..., d // 2:]
            return torch.cat((x1 * cos[:, : d // 2] - x2 * sin[:, : d // 2],
                              x2 * cos[:, d // 2:] + x1 * sin[:, d // 2:]), dim=-1)
        """},
    # float64 inside, float32 out; the rows picked by an index tensor made on x's device
    {"rope_angles": """
        def rope_angles(head_dim, context_length, theta_base=10_000):
            if head_dim % 2:
                raise ValueError(f"rope_angles needs an even head_dim, got {head_dim}")
            exponent = torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim
            angles = torch.arange(context_length, dtype=torch.float64)[:, None] / theta_base ** exponent
            angles = torch.cat((angles, angles), dim=1)
            return angles.cos().float(), angles.sin().float()
        """,
     "apply_rope": """
        def apply_rope(x, cos, sin, offset=0):
            positions = torch.arange(offset, offset + x.shape[-2], device=x.device)
            half = x.shape[-1] // 2
            rotate_half = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
            return x * cos[positions] + rotate_half * sin[positions]
        """,
     "rope_attention": """
        def rope_attention(queries, keys, values, cos, sin, offset=0):
            import math
            T, d = queries.shape[-2:]
            scores = apply_rope(queries, cos, sin, offset) @ apply_rope(keys, cos, sin, offset).mT / math.sqrt(d)
            keep = torch.tril(torch.ones(T, T, device=scores.device)).bool()
            scores = torch.where(keep, scores, torch.full_like(scores, -torch.inf))
            return torch.softmax(scores, dim=-1) @ values
        """},
    # complex numbers: pair i is the number x1[i] + j x2[i], multiplied by e^(j angle)
    {"rope_angles": """
        def rope_angles(head_dim, context_length, theta_base=10_000):
            if head_dim % 2 != 0:
                raise ValueError(f"head_dim={head_dim} is odd")
            inv_freq = torch.pow(float(theta_base), -torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
            angles = torch.arange(context_length, dtype=torch.float32).unsqueeze(-1) * inv_freq
            both = torch.cat((angles, angles), dim=-1)
            return torch.cos(both), torch.sin(both)
        """,
     "apply_rope": """
        def apply_rope(x, cos, sin, offset=0):
            T, half = x.shape[-2], x.shape[-1] // 2
            turn = torch.complex(cos[offset:offset + T, :half], sin[offset:offset + T, :half])
            z = torch.complex(x[..., :half], x[..., half:]) * turn
            return torch.cat((z.real, z.imag), dim=-1)
        """},
]

# The student trial of part 2 (catalogues/student_trial_part2.py): a new student's own style, and the mistakes made
# on it whose first line is right, each with the checks it loses
STYLES += trial_styles(SECTION)
TRIAL_LOSES = {
    "the minus of the exponent forgotten (frequencies grow)": [
        "rope_angles(4, 6) gives the documented cos and sin tables",
        "rope_angles uses theta_base",
        "rope_angles matches the reference on new sizes and bases",
    ],
    "integer division in the exponent (every frequency 1)": [
        "rope_angles(4, 6) gives the documented cos and sin tables",
        "rope_angles uses theta_base",
        "rope_angles matches the reference on new sizes and bases",
    ],
    "tables of head_dim / 2 columns (angles not doubled)": [
        "rope_angles(4, 6) gives the documented cos and sin tables",
        "rope_angles returns two float32 tables of shape (context_length, head_dim)",
        "rope_angles uses theta_base",
        "the two halves of each table are alike: feature i and feature i + head_dim/2 share an angle",
        "rope_angles matches the reference on new sizes and bases",
    ],
    "rows cos[offset:T] (the end not offset)": [
        "apply_rope with offset=k rotates the tokens at positions k .. k+T-1, as a KV cache needs",
        "apply_rope matches the reference on new inputs and offsets",
    ],
    "rotate_half concatenated without dim (on dim 0)": [
        "apply_rope on the worked example's queries gives the documented rotated queries",
        "apply_rope works on (T, head_dim), (B, T, head_dim) and (B, H, T, head_dim) inputs",
        "apply_rope keeps the length of every query and key vector (a rotation)",
        "the scores q @ k.T after apply_rope are unchanged when every position shifts by the same amount",
        "apply_rope with offset=k rotates the tokens at positions k .. k+T-1, as a KV cache needs",
        "apply_rope answers on its input's device",
        "apply_rope matches the reference on new inputs and offsets",
    ],
    "T read from x.shape[1]": [
        "apply_rope on the worked example's queries gives the documented rotated queries",
        "apply_rope works on (T, head_dim), (B, T, head_dim) and (B, H, T, head_dim) inputs",
        "apply_rope keeps the length of every query and key vector (a rotation)",
        "the scores q @ k.T after apply_rope are unchanged when every position shifts by the same amount",
        "apply_rope with offset=k rotates the tokens at positions k .. k+T-1, as a KV cache needs",
        "apply_rope answers on its input's device",
        "apply_rope matches the reference on new inputs and offsets",
    ],
}
MISTAKES += trial_mistakes(SECTION, TRIAL_LOSES)
