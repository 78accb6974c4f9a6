"""Dev-only TorchScript fixture generator (needs torch 2.13); see __main__.py."""
