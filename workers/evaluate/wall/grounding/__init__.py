"""The Wall's grounding: is what the output says supported by what the node was given?"""
