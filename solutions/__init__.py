"""Reference solutions and hidden test cases. Instructor-only: never copied into an image."""
