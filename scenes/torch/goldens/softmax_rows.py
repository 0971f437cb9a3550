# A golden program in a file of its own (docs/torch.md): scenes/torch/
# program.yaml names it with golden: {file: goldens/softmax_rows.py}.
def rows(x: Tensor) -> Tensor:
    # softmax over each row, computed the long way round
    e = torch.exp(x - x.max(dim=1, keepdim=True).values)
    return e / e.sum(dim=1, keepdim=True)
