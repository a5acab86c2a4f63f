//! Camera sources: OpenCV capture (device, video file, image folder) and a synthetic camera.
