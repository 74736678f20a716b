"""The objects the controllers read and write, and the Backend they act through."""
