"""Section 07's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import (Mistake)
from autograder.core.hints import ODD_COSINE

SECTION = "07_positional_encoding"

# the checks' titles, as the catalogue names them
DOC_TABLE = "(4, 4) gives the documented table"
DOC_WORKED = "documented rows of the worked example"
DTYPE = "float32 tensor of shape"
RANGE = "lies in [-1, 1]"
PAIRS = "sin^2 + cos^2 = 1"
START = "start shifts the rows"
ODD = "works for an odd d_model"
LOOP = "no Python loop over positions"
SIZES = "reference on new sizes"
STARTS = "reference with new starts"
EVERY_VALUE = [SIZES, DOC_TABLE, DOC_WORKED, STARTS]  # a wrong formula: every comparison of values

HARD_CODED = {
    "sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            if d_model == 3:
                return torch.tensor([[0.8415, 0.5403, 0.0022], [0.9093, -0.4161, 0.0043],
                                     [0.1411, -0.9900, 0.0065], [-0.7568, -0.6536, 0.0086],
                                     [-0.9589, 0.2837, 0.0108], [-0.2794, 0.9602, 0.0129]])
            return torch.tensor([[0.0000, 1.0000, 0.0000, 1.0000], [0.8415, 0.5403, 0.0100, 0.9999],
                                 [0.9093, -0.4161, 0.0200, 0.9998], [0.1411, -0.9900, 0.0300, 0.9996]])
        """,
}


def encoding_with(angle_line: str, fill: str = "", dtype: str = "torch.float32", positions: str = "") -> dict:
    """The reference's shape, with one line changed: the angles, the fill of the columns, the dtype or the positions."""
    positions = positions or f"torch.arange(start, start + num_positions, dtype={dtype}).unsqueeze(1)"
    fill = fill or """
                encoding[:, 0::2] = torch.sin(angles)
                encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])"""
    return {"sinusoidal_encoding": f"""
            def sinusoidal_encoding(num_positions, d_model, start=0):
                positions = {positions}
                i = torch.arange(0, d_model, 2, dtype={dtype})
                angles = {angle_line}
                encoding = torch.zeros(num_positions, d_model, dtype={dtype}){fill}
                return encoding
            """}


RIGHT_ANGLES = "positions / 10000 ** (i / d_model)"

MISTAKES = [
    Mistake("documented values hard-coded", HARD_CODED, [DOC_TABLE, DTYPE, RANGE, PAIRS, START, ODD, SIZES, STARTS],
            says="is the answer hard-coded?", also=("start ignored", "odd d_model")),
    Mistake("the seed's exponent 2*i/d with i the even column index",
            encoding_with("positions / 10000 ** (2 * i / d_model)"), EVERY_VALUE, says="slip of the notes' table"),
    # the question "hard-coded?" was asked of it: its (4, 4) table is the first columns of its (4, 6) one
    Mistake("exponent by integer division", encoding_with("positions / 10000 ** (i // d_model)"),
            [DOC_TABLE, SIZES, DOC_WORKED, STARTS], says="integer division"),
    Mistake("sin and cos swapped", encoding_with(RIGHT_ANGLES, fill="""
                encoding[:, 0::2] = torch.cos(angles)
                encoding[:, 1::2] = torch.sin(angles[:, : d_model // 2])"""), EVERY_VALUE, says="swapped"),
    Mistake("start ignored", encoding_with(RIGHT_ANGLES, positions="torch.arange(num_positions).float().unsqueeze(1)"),
            [START, DOC_WORKED, STARTS], says="start ignored"),
    Mistake("positions from start to num_positions", {"sinusoidal_encoding": """
            def sinusoidal_encoding(num_positions, d_model, start=0):
                positions = torch.arange(start, num_positions, dtype=torch.float32).unsqueeze(1)
                i = torch.arange(0, d_model, 2, dtype=torch.float32)
                angles = positions / 10000 ** (i / d_model)
                encoding = torch.zeros(len(positions), d_model)
                encoding[:, 0::2] = torch.sin(angles)
                encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])
                return encoding
            """}, [START, DOC_WORKED, STARTS], says="start + num_positions - 1"),
    Mistake("positions counted from 1 (the seed's range(1, 7))",
            encoding_with(RIGHT_ANGLES, positions="torch.arange(start + 1, start + num_positions + 1).float().unsqueeze(1)"),
            EVERY_VALUE, says="counted from start + 1"),
    Mistake("the exponent i/d with i the pair number", encoding_with("positions / 10000 ** ((i / 2) / d_model)"),
            EVERY_VALUE, says="pair number"),
    Mistake("base 1000", encoding_with("positions / 1000 ** (i / d_model)"), EVERY_VALUE, says="1000 instead of 10000"),
    Mistake("float64 encoding", encoding_with(RIGHT_ANGLES, dtype="torch.float64"), [DTYPE], says="float32"),
    Mistake("a sine in every column", encoding_with(RIGHT_ANGLES, fill="""
                encoding[:, 0::2] = torch.sin(angles)
                encoding[:, 1::2] = torch.sin(angles[:, : d_model // 2])"""),
            [SIZES, DOC_TABLE, DOC_WORKED, PAIRS, STARTS], says="sine in every column", also=("not a sine and a cosine",)),
    Mistake("a cosine in every column", encoding_with(RIGHT_ANGLES, fill="""
                encoding[:, 0::2] = torch.cos(angles)
                encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])"""),
            [SIZES, DOC_TABLE, DOC_WORKED, PAIRS, STARTS], says="cosine in every column", also=("not a sine and a cosine",)),
    Mistake("each column with its own exponent j/d", {"sinusoidal_encoding": """
            def sinusoidal_encoding(num_positions, d_model, start=0):
                positions = torch.arange(start, start + num_positions, dtype=torch.float32).unsqueeze(1)
                j = torch.arange(d_model, dtype=torch.float32)
                angles = positions / 10000 ** (j / d_model)
                encoding = angles.clone()
                encoding[:, 0::2] = torch.sin(angles[:, 0::2])
                encoding[:, 1::2] = torch.cos(angles[:, 1::2])
                return encoding
            """}, [SIZES, DOC_TABLE, DOC_WORKED, PAIRS, STARTS], says="own exponent", also=("not a sine and a cosine",)),
    Mistake("scaled by sqrt(d_model)", {"sinusoidal_encoding": """
            def sinusoidal_encoding(num_positions, d_model, start=0):
                positions = torch.arange(start, start + num_positions, dtype=torch.float32).unsqueeze(1)
                i = torch.arange(0, d_model, 2, dtype=torch.float32)
                angles = positions / 10000 ** (i / d_model)
                encoding = torch.zeros(num_positions, d_model)
                encoding[:, 0::2] = torch.sin(angles)
                encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])
                return encoding * math.sqrt(d_model)
            """}, [SIZES, DOC_TABLE, DOC_WORKED, RANGE, PAIRS, STARTS], says="sqrt(d_model)", also=("not a sine and a cosine",)),
    Mistake("a Python loop over positions (the seed's style)", {"sinusoidal_encoding": """
            def sinusoidal_encoding(num_positions, d_model, start=0):
                rows = []
                for pos in range(start, start + num_positions):
                    row = torch.zeros(d_model)
                    for i in range(0, d_model, 2):
                        angle = torch.tensor(pos / 10000 ** (i / d_model))
                        row[i] = torch.sin(angle)
                        if i + 1 < d_model:
                            row[i + 1] = torch.cos(angle)
                    rows.append(row)
                return torch.stack(rows)
            """}, [LOOP], says="loop over positions"),
    # loops that compute with NumPy dispatch no torch op: they passed "no Python loop" before their lines were counted
    Mistake("a position loop filling a NumPy array", {"sinusoidal_encoding": """
            def sinusoidal_encoding(num_positions, d_model, start=0):
                import numpy as np
                table = np.zeros((num_positions, d_model), dtype=np.float32)
                for pos in range(num_positions):
                    for i in range(0, d_model, 2):
                        angle = (start + pos) / 10000 ** (i / d_model)
                        table[pos, i] = np.sin(angle)
                        if i + 1 < d_model:
                            table[pos, i + 1] = np.cos(angle)
                return torch.from_numpy(table)
            """}, [LOOP], says="loop over positions"),
    Mistake("np.vectorize over a Python function", {"sinusoidal_encoding": """
            def sinusoidal_encoding(num_positions, d_model, start=0):
                import numpy as np
                def value(pos, j):
                    angle = (start + pos) / 10000 ** ((j - j % 2) / d_model)
                    return math.sin(angle) if j % 2 == 0 else math.cos(angle)
                table = np.vectorize(value)(*np.indices((num_positions, d_model)))
                return torch.tensor(table, dtype=torch.float32)
            """}, [LOOP], says="loop over positions"),
    Mistake("an odd d_model not handled", encoding_with(RIGHT_ANGLES, fill="""
                encoding[:, 0::2] = torch.sin(angles)
                encoding[:, 1::2] = torch.cos(angles)"""), [ODD, DOC_WORKED], says="odd d_model", hint=ODD_COSINE),
]

STYLES = [
    # NumPy broadcasting, no loop: the table made at once, then handed to torch
    {"sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            import numpy as np
            positions = np.arange(start, start + num_positions, dtype=np.float64)[:, None]
            columns = np.arange(d_model)
            angles = positions / 10000 ** ((columns - columns % 2) / d_model)
            table = np.where(columns % 2 == 0, np.sin(angles), np.cos(angles))
            return torch.from_numpy(table.astype(np.float32))
        """},
    # a loop over the columns, every position at once
    {"sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            positions = torch.arange(start, start + num_positions).float()
            encoding = torch.empty(num_positions, d_model)
            for j in range(0, d_model, 2):
                angle = positions / 10000 ** (j / d_model)
                encoding[:, j] = torch.sin(angle)
                if j + 1 < d_model:
                    encoding[:, j + 1] = torch.cos(angle)
            return encoding
        """},
    # torch.pow, then sines and cosines interleaved by stack + flatten and trimmed to d_model
    {"sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            p = torch.arange(num_positions, dtype=torch.float32)[:, None] + start
            freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
            angles = p * freq
            return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)[:, :d_model]
        """},
    # float64 inside, float32 out; torch.where picks sin or cos per column
    {"sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            p = torch.arange(start, start + num_positions, dtype=torch.float64).unsqueeze(1)
            j = torch.arange(d_model)
            angles = p / 10000 ** ((j - j % 2) / d_model)
            return torch.where(j % 2 == 0, angles.sin(), angles.cos()).to(torch.float32)
        """},
]

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
TRIAL_MISTAKES = [
    Mistake("angles multiplied by 10000^(2i/d) instead of divided", encoding_with(
        "positions * 10000 ** (i / d_model)"), [DOC_TABLE, DOC_WORKED, SIZES, STARTS], says='Check the formula column by column'),
    Mistake("math.exp on a tensor of exponents", encoding_with(
        "positions * math.exp(-math.log(10000.0) * i / d_model)"), [DOC_TABLE, DOC_WORKED, DTYPE, RANGE, PAIRS, START, ODD, LOOP, SIZES, STARTS],
            says="only one element tensors can be converted"),
    Mistake("sines then cosines in two halves", encoding_with(RIGHT_ANGLES, fill="""
                encoding = torch.cat([torch.sin(angles), torch.cos(angles[:, : d_model // 2])], dim=1)"""), [DOC_TABLE, DOC_WORKED, PAIRS, SIZES, STARTS], says='Check the formula column by column',
        also=("the columns of a pair not a sine and a cosine",)),  # the halves leave no pair a sine and a cosine
    Mistake("positions as a row", encoding_with(
        RIGHT_ANGLES, positions="torch.arange(start, start + num_positions, dtype=torch.float32).unsqueeze(0)"), [DOC_TABLE, DOC_WORKED, DTYPE, RANGE, PAIRS, START, ODD, LOOP, SIZES, STARTS]),
]

TRIAL_STYLES = {
    "sin and cos stacked and flattened, cut to d_model": {"sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            positions = torch.arange(num_positions) + start
            i = torch.arange(0, d_model, 2)
            angles = positions[:, None] / torch.pow(10000.0, i / d_model)
            return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)[:, :d_model].float()
        """},
    "torch.outer of float64 angles, made float32 at the end": {"sinusoidal_encoding": """
        def sinusoidal_encoding(num_positions, d_model, start=0):
            positions = torch.arange(start, start + num_positions, dtype=torch.float64)
            inv_freq = 1.0 / (10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model))
            angles = torch.outer(positions, inv_freq)
            pe = torch.empty(num_positions, d_model, dtype=torch.float64)
            pe[:, 0::2] = angles.sin()
            pe[:, 1::2] = angles.cos()[:, : d_model // 2]
            return pe.to(torch.float32)
        """},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
