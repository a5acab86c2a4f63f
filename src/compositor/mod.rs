//! The compositor: live video background with the simulation drawn over it (kiss3d).
