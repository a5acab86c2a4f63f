//! Interaction: the stylus tip clips to, drags and releases a body.
