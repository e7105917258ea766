"""The Helion kernels Loom ships, each with input builders and a torch reference."""
