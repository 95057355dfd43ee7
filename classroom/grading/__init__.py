"""The class's grading: every way a class's submissions reach the grader's pipeline and its recorder.

``service`` grades each submission as the exchange receives it (a service the hub starts, or
``jaxcourse hub up`` in a container of its own) and answers an instructor's server through the
class directory's inbox; ``class_run`` grades a whole class on the queue or through that service
(``jaxcourse grade --broker`` / ``--sandbox service``); ``formgrader`` puts the service behind
nbgrader's Autograde button; ``worker`` is what a queue's worker does with a job (the same
``Grader`` as ``jaxcourse grade``); ``identity`` says which grader and image a job asks for, so a
worker refuses a job its code would grade differently. What travels, and how, is ``classroom.queue``'s.
"""
