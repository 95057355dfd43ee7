"""local_shape returns 300,000 numbers (2 MB of JSON per case): the results file outgrows its cap and is refused."""

STATUS = "invalid"
MESSAGE = "results are larger than allowed"


def local_shape(global_shape, spec, mesh_shape):
    return list(range(300_000))
