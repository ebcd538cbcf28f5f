"""Inference: maximum likelihood with asymptotic intervals (MAP) and NUTS, each returning a DataTree."""
