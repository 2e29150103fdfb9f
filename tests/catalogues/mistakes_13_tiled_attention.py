"""Section 13's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import Mistake
from catalogues.student_trial_part2 import trial_mistakes, trial_styles

SECTION = "13_tiled_attention"

# A correct tiled_attention in a style of its own (the output preallocated and filled block by block, a tile skipped
# with continue); most mistakes below are one edit of it.
TILED = """
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    T, d = q.shape[-2], q.shape[-1]
    out = torch.zeros_like(q)
    lse = torch.zeros(q.shape[:-1], dtype=q.dtype, device=q.device)
    for i in range(0, T, block_q):
        qi = q[..., i:i + block_q, :] / d ** 0.5
        rows = torch.arange(i, min(i + block_q, T), device=q.device)
        m = torch.full(qi.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros_like(qi)
        for j in range(0, T, block_k):
            if causal and j > rows[-1]:
                continue
            s = qi @ k[..., j:j + block_k, :].transpose(-2, -1)
            if causal:
                cols = torch.arange(j, min(j + block_k, T), device=q.device)
                s = s.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new.unsqueeze(-1))
            scale = torch.exp(m - m_new)
            l = scale * l + p.sum(-1)
            acc = scale.unsqueeze(-1) * acc + p @ v[..., j:j + block_k, :]
            m = m_new
        out[..., i:i + block_q, :] = acc / l.unsqueeze(-1)
        lse[..., i:i + block_q] = m + torch.log(l)
    return out, lse
"""

DOC = "gives the documented output"
DOC_CAUSAL = "gives the documented causal output"
EQUALS = "equals softmax attention when the block sizes"
LSE = "logsumexp is the log-sum-exp"
CAUSAL = "causal=True equals causal softmax"
NO_LEADING = "without leading dims"
NO_FULL = "never makes a tensor as large"
SKIPPED = "never computes a tile entirely above"
UNCHANGED = "leaves its inputs unchanged"
OWN_MAX = "keeps each row's own max"
DEFAULT_ARGS = "tiled_attention's defaults"
MADE_ON = "makes its tensors on the inputs' device"
REF = "tiled_attention matches the reference at other sizes"
REF_CAUSAL = "causal=True matches the reference"
DEFAULTS = "default block sizes (64)"
VALUES = [DOC, DOC_CAUSAL, EQUALS, LSE, CAUSAL, NO_LEADING, REF, REF_CAUSAL, DEFAULTS]
EVERY_CHECK = VALUES + [OWN_MAX, NO_FULL, SKIPPED, DEFAULT_ARGS, MADE_ON, UNCHANGED]


def edit(*pairs) -> dict:
    """TILED with each (old, new) line replaced: one mistake, written as a student would."""
    source = TILED
    for old, new in pairs:
        assert old in source, old
        source = source.replace(old, new)
    return {"tiled_attention": source}


RESCALED_SUM = "            l = scale * l + p.sum(-1)\n"
SKIP = "            if causal and j > rows[-1]:\n                continue\n"

MISTAKES = [
    Mistake("running sum not rescaled", edit((RESCALED_SUM, "            l = l + p.sum(-1)\n")),
            [DOC_CAUSAL, EQUALS, LSE, CAUSAL, REF, REF_CAUSAL, DEFAULTS], says="running sum not rescaled"),
    Mistake("output accumulator not rescaled",
            edit(("acc = scale.unsqueeze(-1) * acc + p", "acc = acc + p")),
            [DOC_CAUSAL, EQUALS, CAUSAL, REF, REF_CAUSAL, DEFAULTS], says="accumulator not rescaled"),
    Mistake("max updated after the sum (old max used)", edit(
        ("            m_new = torch.maximum(m, s.amax(-1))\n            p = torch.exp(s - m_new.unsqueeze(-1))\n",
         "            p = torch.exp(s - m.unsqueeze(-1))\n            m_new = torch.maximum(m, s.amax(-1))\n")),
        VALUES, says="max updated after the sum"),
    Mistake("log-sum-exp off by the max", edit(("lse[..., i:i + block_q] = m + torch.log(l)",
                                                "lse[..., i:i + block_q] = torch.log(l)")),
            [DOC, DOC_CAUSAL, LSE, CAUSAL, REF, REF_CAUSAL, DEFAULTS], says="off by the max"),
    Mistake("no 1/sqrt(d) scale", edit(("qi = q[..., i:i + block_q, :] / d ** 0.5", "qi = q[..., i:i + block_q, :]")),
            VALUES, says="not divided by sqrt(d)"),
    Mistake("output not divided by the final sum", edit(("out[..., i:i + block_q, :] = acc / l.unsqueeze(-1)",
                                                         "out[..., i:i + block_q, :] = acc")),
            [DOC, DOC_CAUSAL, EQUALS, CAUSAL, NO_LEADING, REF, REF_CAUSAL, DEFAULTS], says="not divided by the final sum"),
    Mistake("last partial key block dropped", edit(("        for j in range(0, T, block_k):\n",
                                                    "        for j in range(0, T // block_k * block_k, block_k):\n")),
            [DOC, EQUALS, LSE, CAUSAL, NO_LEADING, REF, REF_CAUSAL, DEFAULTS], says="last block dropped"),
    Mistake("causal tiles above the diagonal computed", edit((SKIP, "")), [SKIPPED], says="above the diagonal"),
    Mistake("causal skip off by one (the block's end for its last query)",
            edit(("if causal and j > rows[-1]:", "if causal and j > min(i + block_q, T):")), [SKIPPED],
            says="skip off by one"),
    Mistake("max over the whole tile", edit(("m_new = torch.maximum(m, s.amax(-1))", "m_new = torch.maximum(m, s.amax())")),
            [OWN_MAX], says="max taken over the whole tile"),
    Mistake("causal=True by default", edit(("block_k=64, causal=False):", "block_k=64, causal=True):")),
            [DEFAULT_ARGS], says="causal=True by default"),
    Mistake("default blocks of 32", edit(("block_q=64, block_k=64, causal", "block_q=32, block_k=32, causal")),
            [DEFAULT_ARGS], says="the default blocks are block_q=64"),
    Mistake("tile mask made on the CPU", edit(
        ("rows = torch.arange(i, min(i + block_q, T), device=q.device)", "rows = torch.arange(i, min(i + block_q, T))"),
        ("cols = torch.arange(j, min(j + block_k, T), device=q.device)", "cols = torch.arange(j, min(j + block_k, T))")),
        [MADE_ON], says="device=q.device"),
    Mistake("running max in the default dtype", edit(
        ('m = torch.full(qi.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)',
         'm = torch.full(qi.shape[:-1], float("-inf"), device=q.device)')),
        [MADE_ON], says="dtype=q.dtype"),
    Mistake("full (T, T) scores materialised", edit(
        ("    for i in range(0, T, block_q):\n",
         "    scores = q @ k.transpose(-2, -1) / d ** 0.5\n    for i in range(0, T, block_q):\n"),
        ("            s = qi @ k[..., j:j + block_k, :].transpose(-2, -1)\n",
         "            s = scores[..., i:i + block_q, j:j + block_k]\n")),
        [NO_FULL], says="full (T, T) scores"),
    Mistake("F.scaled_dot_product_attention called", {"tiled_attention": """
        def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
            if causal:
                scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
            return out, torch.logsumexp(scores, dim=-1)
        """}, EVERY_CHECK, says="forbids"),
]

HARD_CODED = {
    "tiled_attention": """
        def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
            if causal:
                out = torch.tensor([[0.4300, 0.1500, 0.8900], [0.4993, 0.5657, 0.7572], [0.5249, 0.6685, 0.7148],
                                    [0.4541, 0.6381, 0.6314], [0.5206, 0.5514, 0.5236], [0.4219, 0.6231, 0.5507]])
                lse = torch.tensor([0.5771, 1.4124, 1.8541, 1.7728, 1.9471, 2.2542])
            else:
                out = torch.tensor([[0.4374, 0.5896, 0.5582], [0.4362, 0.6228, 0.5523], [0.4370, 0.6216, 0.5515],
                                    [0.4303, 0.6104, 0.5417], [0.4525, 0.5874, 0.5274], [0.4219, 0.6231, 0.5507]])
                lse = torch.tensor([2.2296, 2.4383, 2.4298, 2.1483, 2.1033, 2.2542])
            return out.expand(2, 6, 3).clone(), lse.expand(2, 6).clone()
        """,
}
MISTAKES.append(Mistake("tiled_attention hard-coded", HARD_CODED,
                        [DOC] + VALUES[2:] + [OWN_MAX, NO_FULL, SKIPPED, DEFAULT_ARGS, MADE_ON],
                        says="is the answer hard-coded?", hard_coded=True,
                        also=("a tensor made without device=",)))  # its torch.tensor(...) answers are made so

STYLES = [
    {"tiled_attention": TILED},
    {  # outputs gathered in lists and concatenated; the causal loop stops at the last needed key block
        "tiled_attention": """
            import math

            def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
                n = q.shape[-2]
                outs, lses = [], []
                for start in range(0, n, block_q):
                    stop = min(start + block_q, n)
                    qb = q[..., start:stop, :] * (1.0 / math.sqrt(q.shape[-1]))
                    run_max = qb.new_full(qb.shape[:-1], -math.inf)
                    run_sum = qb.new_zeros(qb.shape[:-1])
                    acc = qb.new_zeros(qb.shape)
                    last_key = stop if causal else n
                    for kstart in range(0, last_key, block_k):
                        kstop = min(kstart + block_k, n)
                        sc = torch.matmul(qb, k[..., kstart:kstop, :].mT)
                        if causal:
                            future = torch.arange(kstart, kstop, device=q.device) > torch.arange(start, stop, device=q.device).unsqueeze(1)
                            sc = torch.where(future, torch.full_like(sc, -math.inf), sc)
                        new_max = torch.max(run_max, sc.max(dim=-1).values)
                        weights = (sc - new_max[..., None]).exp()
                        shrink = (run_max - new_max).exp()
                        run_sum = run_sum * shrink + weights.sum(dim=-1)
                        acc = acc * shrink[..., None] + torch.matmul(weights, v[..., kstart:kstop, :])
                        run_max = new_max
                    outs.append(acc / run_sum[..., None])
                    lses.append(run_max + run_sum.log())
                return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)
            """},
    {  # the log-sum-exp kept as the running quantity (torch.logaddexp), einsum for both products
        "tiled_attention": """
            def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
                T = q.shape[-2]
                scale = q.shape[-1] ** -0.5
                out_blocks, lse_blocks = [], []
                for a in range(0, T, block_q):
                    b = min(a + block_q, T)
                    qa = q[..., a:b, :]
                    lse = torch.full(qa.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
                    out = torch.zeros_like(qa)
                    for c in range(0, T, block_k):
                        if causal and c >= b:
                            break
                        e = min(c + block_k, T)
                        s = torch.einsum("...qd,...kd->...qk", qa, k[..., c:e, :]) * scale
                        if causal:
                            hide = torch.triu(torch.ones(b - a, e - c, dtype=torch.bool, device=q.device), diagonal=a - c + 1)
                            s = s.masked_fill(hide, float("-inf"))
                        tile_lse = torch.logsumexp(s, dim=-1)
                        new_lse = torch.logaddexp(lse, tile_lse)
                        out = out * torch.exp(lse - new_lse)[..., None] + torch.einsum(
                            "...qk,...kd->...qd", torch.exp(s - new_lse[..., None]), v[..., c:e, :])
                        lse = new_lse
                    out_blocks.append(out)
                    lse_blocks.append(lse)
                return torch.cat(out_blocks, -2), torch.cat(lse_blocks, -1)
            """},
    {  # while loops over positions, the tile's max taken with keepdim, the running state kept with keepdim
        "tiled_attention": """
            def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
                T, d = q.shape[-2:]
                results, sums = [], []
                i = 0
                while i < T:
                    i_end = min(i + block_q, T)
                    qi = q[..., i:i_end, :]
                    m = torch.full((*qi.shape[:-1], 1), -float("inf"), dtype=q.dtype, device=q.device)
                    l = torch.zeros_like(m)
                    o = torch.zeros_like(qi)
                    j = 0
                    while j < (i_end if causal else T):
                        j_end = min(j + block_k, T)
                        s = (qi @ k[..., j:j_end, :].transpose(-1, -2)) / (d ** 0.5)
                        if causal:
                            qpos = torch.arange(i, i_end, device=q.device).view(-1, 1)
                            kpos = torch.arange(j, j_end, device=q.device).view(1, -1)
                            s = s.masked_fill(kpos > qpos, float("-inf"))
                        m_next = torch.maximum(m, s.amax(dim=-1, keepdim=True))
                        p = torch.exp(s - m_next)
                        corr = torch.exp(m - m_next)
                        l = l * corr + p.sum(dim=-1, keepdim=True)
                        o = o * corr + p @ v[..., j:j_end, :]
                        m = m_next
                        j = j_end
                    results.append(o / l)
                    sums.append((m + torch.log(l)).squeeze(-1))
                    i = i_end
                return torch.cat(results, dim=-2), torch.cat(sums, dim=-1)
            """},
]

# The student trial of part 2 (catalogues/student_trial_part2.py): a new student's own style, and the mistakes made
# on it whose first line is right, each with the checks it loses
STYLES += trial_styles(SECTION)
TRIAL_LOSES = {
    "causal mask of a tile built from positions inside the tile": [
        "tiled_attention gives the documented causal output and log-sum-exp of the worked example",
        "tiled_attention with causal=True equals causal softmax attention",
        "tiled_attention with causal=True matches the reference at other sizes and block sizes",
        "tiled_attention with its default block sizes (64) matches the reference on 150 tokens",
    ],
    "rescale factor inverted, exp(m_new - m)": [
        "tiled_attention gives the documented output and log-sum-exp of the worked example",
        "tiled_attention gives the documented causal output and log-sum-exp of the worked example",
        "tiled_attention equals softmax attention when the block sizes do not divide T",
        "tiled_attention's logsumexp is the log-sum-exp of each row of the scaled scores",
        "tiled_attention with causal=True equals causal softmax attention",
        "tiled_attention takes (T, d) inputs without leading dims and blocks larger than T",
        "tiled_attention matches the reference at other sizes and block sizes",
        "tiled_attention with causal=True matches the reference at other sizes and block sizes",
        "tiled_attention with its default block sizes (64) matches the reference on 150 tokens",
    ],
    "causal loop stops at the first key block after the block's first query": [
        "tiled_attention with causal=True equals causal softmax attention",
        "tiled_attention with causal=True matches the reference at other sizes and block sizes",
    ],
    "last partial block of queries dropped (range(T // block_q))": [
        "tiled_attention equals softmax attention when the block sizes do not divide T",
        "tiled_attention's logsumexp is the log-sum-exp of each row of the scaled scores",
        "tiled_attention with causal=True equals causal softmax attention",
        "tiled_attention takes (T, d) inputs without leading dims and blocks larger than T",
        "tiled_attention with causal=True never computes a tile entirely above the diagonal",
        "tiled_attention matches the reference at other sizes and block sizes",
        "tiled_attention with causal=True matches the reference at other sizes and block sizes",
        "tiled_attention with its default block sizes (64) matches the reference on 150 tokens",
        "tiled_attention's defaults: blocks of 64 queries and 64 keys, causal=False",
        "tiled_attention makes its tensors on the inputs' device and in their dtype",
    ],
    "queries scaled in place (q changed)": [
        "tiled_attention leaves its inputs unchanged",
    ],
}
MISTAKES += trial_mistakes(SECTION, TRIAL_LOSES)
