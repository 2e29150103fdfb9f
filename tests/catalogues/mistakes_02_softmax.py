"""Section 02's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import (Mistake)
from autograder.core.hints import KEEPDIM, MAX_PAIR

SECTION = "02_softmax"

HARD_CODED = {
    "normalize_by_sum": """
        def normalize_by_sum(scores, dim=-1):
            return torch.tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
        """,
    "softmax_naive": """
        def softmax_naive(x, dim=-1):
            return torch.tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
        """,
    "softmax": """
        def softmax(x, dim=-1):
            if x.dim() == 1:
                return torch.tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
            return torch.tensor([[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
                                 [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
                                 [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
                                 [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
                                 [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
                                 [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
        """,
    "context_vectors": """
        def context_vectors(weights, inputs):
            return torch.tensor([0.4419, 0.6515, 0.5683])
        """,
    "simple_self_attention": """
        def simple_self_attention(inputs):
            return torch.tensor([[0.4421, 0.5931, 0.5790], [0.4419, 0.6515, 0.5683], [0.4431, 0.6496, 0.5671],
                                 [0.4304, 0.6298, 0.5510], [0.4671, 0.5910, 0.5266], [0.4177, 0.6503, 0.5645]])
        """,
}

CONTEXT_CASES = "context_vectors handles all queries"  # the task's (T, T) and (B, T, T) cases, visible
# a title part of every check of the section: a notebook that reaches into the grader's watch loses them all
EVERY_CHECK = ["normalize_by_sum gives the documented", "softmax_naive and softmax give the documented",
               "context vector z(2)", "simple_self_attention gives the documented", "softmax_naive equals",
               "softmax matches", "sum to 1 along dim", "magnitude 1000", "rows that contain -inf",
               "no built-in softmax", "leave their input unchanged", "normalize_by_sum divides",
               "context_vectors: weighted", "simple_self_attention on new", CONTEXT_CASES]

MISTAKES = [
    Mistake("documented values hard-coded", HARD_CODED,
            ["normalize_by_sum gives the documented", "softmax_naive and softmax give the documented",
             "context vector z(2)", "simple_self_attention gives the documented", "normalize_by_sum divides", "softmax_naive equals", "softmax matches", "sum to 1 along dim",
             "magnitude 1000", "rows that contain -inf", "context_vectors: weighted", "simple_self_attention on new",
             CONTEXT_CASES], says="is the answer hard-coded?"),
    # one function's documented answer written out, the others computed: named in that function's own cell
    Mistake("normalize_by_sum hard-coded", {"normalize_by_sum": HARD_CODED["normalize_by_sum"]},
            ["normalize_by_sum gives the documented", "normalize_by_sum divides"], says="is the answer hard-coded?",
            hard_coded=True),
    Mistake("normalize_by_sum with F.normalize", {"normalize_by_sum": """
            def normalize_by_sum(scores, dim=-1):
                return torch.nn.functional.normalize(scores, dim=dim)
            """}, ["normalize_by_sum gives the documented", "normalize_by_sum divides"], says="L2 norm"),
    Mistake("normalize_by_sum without keepdim", {"normalize_by_sum": """
            def normalize_by_sum(scores, dim=-1):
                return scores / scores.sum(dim=dim)
            """}, ["normalize_by_sum divides"], says="keepdim"),
    # its own cell's check raised torch's size mismatch with no word of keepdim; softmax's cell named it (the
    # square worked scores broadcast without an error there)
    Mistake("softmax_naive sum without keepdim", {"softmax_naive": """
            def softmax_naive(x, dim=-1):
                exps = torch.exp(x)
                return exps / exps.sum(dim=dim)
            """}, ["softmax_naive equals"], says="keepdim", hint=KEEPDIM),
    Mistake("softmax_naive defaults to dim 0", {"softmax_naive": """
            def softmax_naive(x, dim=0):
                return torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True)
            """}, ["softmax_naive equals"], says="dim 0"),
    Mistake("softmax_naive sums over every entry", {"softmax_naive": """
            def softmax_naive(x, dim=-1):
                return torch.exp(x) / torch.exp(x).sum()
            """}, ["softmax_naive equals"], says="all entries"),
    Mistake("softmax over dim 0", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x - x.amax(dim=0, keepdim=True))
                return exps / exps.sum(dim=0, keepdim=True)
            """}, ["softmax matches", "softmax_naive and softmax give the documented", "sum to 1 along dim"], says="wrong dim", also=("dim 0",)),
    Mistake("softmax max without keepdim", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x - x.max(dim=dim).values)
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ["softmax matches", "softmax_naive and softmax give the documented", "sum to 1 along dim"], says="keepdim",
            hint=KEEPDIM),
    Mistake("softmax without the max subtraction", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x)
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ["magnitude 1000"], says="subtract the max"),
    # stable, and told to "subtract the max" it subtracts: named by its values (on the symmetric documented scores
    # it gives what a max taken without keepdim gives, and is named so there)
    Mistake("softmax shifted by the max along dim 0", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x - x.amax(dim=0, keepdim=True))
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ["magnitude 1000", "softmax_naive and softmax give the documented", "softmax matches torch.softmax"],
            says="along dim 0"),
    Mistake("softmax shifted by the mean", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x - x.mean(dim=dim, keepdim=True))
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ["rows that contain -inf", "magnitude 1000"], says="not by the mean"),
    Mistake("softmax shifts its input in place", {"softmax": """
            def softmax(x, dim=-1):
                x -= x.amax(dim=dim, keepdim=True)
                exps = torch.exp(x)
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ["leave their input unchanged"], says="in place"),
    Mistake("built-in softmax", {"softmax": """
            def softmax(x, dim=-1):
                return torch.softmax(x, dim=dim)
            """}, ["no built-in softmax", "softmax matches", "softmax_naive and softmax give the documented",
                   "sum to 1 along dim", "magnitude 1000", "rows that contain -inf", "leave their input unchanged"],
            says="forbids"),
    Mistake("built-in softmax behind an alias", {"softmax_naive": """
            def softmax_naive(x, dim=-1):
                smooth = torch.nn.functional.softmax
                return smooth(x, dim)
            """}, ["no built-in softmax", "softmax_naive and softmax give the documented", "softmax_naive equals",
                   "leave their input unchanged"], says="forbids"),
    # a name assembled at run time is how code hides from the watch: the whole section is refused
    Mistake("built-in softmax behind a computed name", {"softmax_naive": """
            def softmax_naive(x, dim=-1):
                smooth = getattr(torch.nn.functional, "soft" + "max")
                return smooth(x, dim)
            """}, ["no built-in softmax", *(title for title in EVERY_CHECK if title != "no built-in softmax")],
            says="computed attribute name"),
    Mistake("context_vectors sums over the embedding dim", {"context_vectors": """
            def context_vectors(weights, inputs):
                return (weights.unsqueeze(-1) * inputs).sum(dim=-1)
            """}, ["context vector z(2)", "context_vectors: weighted", CONTEXT_CASES], says="embedding dim"),
    Mistake("context_vectors with transposed weights", {"context_vectors": """
            def context_vectors(weights, inputs):
                if weights.dim() == 1:
                    return weights @ inputs
                return weights.transpose(-2, -1) @ inputs
            """}, [CONTEXT_CASES, "context_vectors: weighted"], says="transposed"),
    Mistake("context_vectors for a single query only", {"context_vectors": """
            def context_vectors(weights, inputs):
                context = torch.zeros(inputs.shape[-1])
                for i, x_i in enumerate(inputs):
                    context += weights[i] * x_i
                return context
            """}, [CONTEXT_CASES, "context_vectors: weighted"]),
    Mistake("simple_self_attention softmax over dim 0", {"simple_self_attention": """
            def simple_self_attention(inputs):
                return context_vectors(softmax(score_matrix(inputs), dim=0), inputs)
            """}, ["simple_self_attention gives the documented", "simple_self_attention on new"], says="dim 0"),
    Mistake("simple_self_attention scaled", {"simple_self_attention": """
            def simple_self_attention(inputs):
                scores = score_matrix(inputs) / inputs.shape[-1] ** 0.5
                return context_vectors(softmax(scores, dim=-1), inputs)
            """}, ["simple_self_attention on new", "simple_self_attention gives the documented"], says="sqrt(d)"),
]

STYLES = [
    {"softmax": """
        def softmax(x, dim=-1):
            return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))
        """,
     "softmax_naive": """
        def softmax_naive(x, dim=-1):
            numerator = x.exp()
            return numerator.div(numerator.sum(dim).unsqueeze(dim))
        """,
     "normalize_by_sum": """
        def normalize_by_sum(scores, dim=-1):
            return scores / torch.sum(scores, dim=dim).unsqueeze(dim)
        """,
     "context_vectors": """
        def context_vectors(weights, inputs):
            return torch.matmul(weights, inputs)
        """},
    {"softmax": """
        def softmax(x, dim=-1):
            biggest = x.max(dim, keepdim=True).values
            numerator = torch.exp(x - biggest)
            return numerator / numerator.sum(dim, keepdim=True)
        """,
     "context_vectors": """
        def context_vectors(weights, inputs):
            if weights.dim() == 1:
                return torch.einsum("j,jd->d", weights, inputs)
            return torch.einsum("...ij,...jd->...id", weights, inputs)
        """,
     "simple_self_attention": """
        def simple_self_attention(inputs):
            weights = softmax(torch.matmul(inputs, inputs.mT))
            return context_vectors(weights, inputs)
        """},
    {"softmax": """
        def softmax(x, dim=-1):
            top = x.max(dim=dim, keepdim=True).values
            top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
            numerator = torch.where(x == float("-inf"), torch.zeros_like(x), torch.exp(x - top))
            return numerator / numerator.sum(dim=dim, keepdim=True)
        """,
     "normalize_by_sum": """
        def normalize_by_sum(scores, dim=-1):
            return torch.div(scores, scores.sum(dim, keepdim=True))
        """,
     "context_vectors": """
        def context_vectors(weights, inputs):
            if weights.dim() == 1:
                return (weights.unsqueeze(-1) * inputs).sum(dim=0)
            return (weights.unsqueeze(-1) * inputs.unsqueeze(-3)).sum(dim=-2)
        """},
]

# the documented weights written out in softmax_naive alone: named in its own cell
MISTAKES.append(Mistake("softmax_naive hard-coded", {"softmax_naive": HARD_CODED["softmax_naive"]},
                        ["softmax_naive and softmax give the documented", "softmax_naive equals"],
                        says="is the answer hard-coded?", hard_coded=True))

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
TRIAL_MISTAKES = [
    Mistake("normalize_by_sum ignores its dim", {"normalize_by_sum": """
            def normalize_by_sum(scores, dim=-1):
                return scores / scores.sum(dim=-1, keepdim=True)
            """}, ['normalize_by_sum divides by the sum along the given dim'], says='the sum along the last dim whatever dim is'),
    Mistake("softmax subtracts x.max(...) itself, not its values", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x - x.max(dim=dim, keepdim=True))
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ['softmax_naive and softmax give the documented', 'softmax matches torch.softmax on any shape', 'softmax weights are positive', 'softmax is stable'], says='returns (values, indices)', hint=MAX_PAIR),
    Mistake("softmax shifted by the max of the whole tensor", {"softmax": """
            def softmax(x, dim=-1):
                exps = torch.exp(x - x.max())
                return exps / exps.sum(dim=dim, keepdim=True)
            """}, ['softmax is stable'], says='the max of the whole tensor subtracted'),
    Mistake("softmax_naive sums over the last dim whatever dim is", {"softmax_naive": """
            def softmax_naive(x, dim=-1):
                exps = torch.exp(x)
                return exps / exps.sum(dim=-1, keepdim=True)
            """}, ['softmax_naive equals torch.softmax on small'], says='softmax over the last dim whatever dim is'),
    Mistake("context_vectors with einsum over a broadcast batch", {"context_vectors": """
            def context_vectors(weights, inputs):
                return torch.einsum("...j,...jd->...d", weights, inputs)
            """}, ['context_vectors handles all queries', 'context_vectors: weighted sums']),
    Mistake("simple_self_attention with softmax_naive", {"simple_self_attention": """
            def simple_self_attention(inputs):
                return context_vectors(softmax_naive(score_matrix(inputs), dim=-1), inputs)
            """}, []),
    Mistake("softmax with nn.Softmax (forbidden)", {"softmax": """
            def softmax(x, dim=-1):
                return nn.Softmax(dim=dim)(x)
            """}, ['softmax_naive and softmax give the documented', 'softmax matches torch.softmax on any shape', 'softmax weights are positive', 'softmax handles rows that contain -inf', 'softmax is stable', 'compute the exps themselves', 'leave their input unchanged'], says='which this section forbids'),
]

TRIAL_STYLES = {
    "max(...)[0], keepdims, sub and exp as methods": {
        "softmax": """
            def softmax(x, dim=-1):
                exps = x.sub(x.max(dim=dim, keepdim=True)[0]).exp()
                return exps / exps.sum(dim=dim, keepdims=True)
            """,
        "normalize_by_sum": """
            def normalize_by_sum(scores, dim=-1):
                return scores.div(scores.sum(dim=dim, keepdims=True))
            """,
        "softmax_naive": """
            def softmax_naive(x, dim=-1):
                return torch.exp(x) / torch.exp(x).sum(dim, keepdim=True)
            """,
        "simple_self_attention": """
            def simple_self_attention(inputs):
                scores = score_matrix(inputs)
                return context_vectors(softmax(scores, dim=scores.dim() - 1), inputs)
            """},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
