//! MicroScribe-class digitizer arm: HCI protocol codec, kinematics, serial transport, simulated arm.
