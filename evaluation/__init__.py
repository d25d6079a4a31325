"""evaluation package."""
