"""Code the assignments give their students, one module per assignment."""
