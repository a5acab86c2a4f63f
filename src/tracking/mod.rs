//! Marker tracking: ArUco detection, camera pose by solvePnP, smoothing.
