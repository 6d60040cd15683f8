import numpy as np
import numpy.typing as npt

def parse_lines(text: bytes | memoryview, hex_columns: bytes, out: npt.NDArray[np.uint64], /) -> int:
    """Whole lines of `len(hex_columns)` integers into the rows of `out`; the line count, or -1 when a line is not
    well formed or `out` has too few columns."""
